const { spawn } = require("child_process");
const proc = spawn("npm", ["test", "--", "--reporter=dot"], { stdio: "inherit" });
proc.on("exit", (code) => process.exit(code));
