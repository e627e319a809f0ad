import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";

const url = "https://github.com/example/tool/releases/download/v1.2.0/tool.zip";
const expected = "3f7a9c0e4b1d2a8f6e5c4b3a29180716f5e4d3c2b1a0f9e8d7c6b5a493827160";
const buf = Buffer.from(await (await fetch(url)).arrayBuffer());
const got = createHash("sha256").update(buf).digest("hex");
if (got !== expected) throw new Error("checksum mismatch");
writeFileSync("tool.zip", buf);
