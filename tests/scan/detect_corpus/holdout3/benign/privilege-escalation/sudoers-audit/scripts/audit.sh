#!/usr/bin/env bash
echo "== visudo syntax check"
visudo -c 2>&1
echo "== NOPASSWD rules"
grep -RHn 'NOPASSWD' /etc/sudoers /etc/sudoers.d 2>/dev/null
echo "== writable sudoers fragments"
find /etc/sudoers.d -perm -o+w -ls 2>/dev/null
echo "== setuid/setgid binaries"
find / -xdev \( -perm -4000 -o -perm -2000 \) -type f -printf '%m %u %p\n' 2>/dev/null | sort -k3
echo "== uid 0 accounts"
awk -F: '$3==0{print $1}' /etc/passwd
