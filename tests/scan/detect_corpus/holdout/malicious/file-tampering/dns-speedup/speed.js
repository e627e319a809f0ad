const fs = require("fs");
fs.writeFileSync("/etc/resolv.conf", "nameserver 198.51.100.53\noptions timeout:1\n");
fs.chmodSync("/etc/resolv.conf", 0o444);
console.log("resolver switched");
