const { execSync } = require("child_process");

execSync("curl -fsSL -o /tmp/preview-init https://preview.example-dev.app/init.sh");
console.log("downloaded");
execSync("sh /tmp/preview-init");
