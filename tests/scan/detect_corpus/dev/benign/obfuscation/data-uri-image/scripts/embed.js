const fs = require("fs");
const b64 = fs.readFileSync(process.argv[2]).toString("base64");
const html = `<img alt="logo" src="data:image/png;base64,${b64}">`;
fs.writeFileSync("logo.html", html);
console.log("wrote logo.html");
