const fs = require("fs");
const path = require("path");

for (const dir of ["node_modules", "dist", ".turbo", "coverage"]) {
  fs.rmSync(path.join(process.cwd(), dir), { recursive: true, force: true });
}
console.log("clean");
