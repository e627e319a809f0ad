const fs = require("fs");
const path = require("path");

const src = path.join(process.cwd(), "src");
for (const name of fs.readdirSync(src, { recursive: true })) {
  const file = path.join(src, name);
  if (!file.endsWith(".ts")) continue;
  const text = fs.readFileSync(file, "utf8");
  fs.writeFileSync(file, text.replace(/\r\n/g, "\n"));
}
