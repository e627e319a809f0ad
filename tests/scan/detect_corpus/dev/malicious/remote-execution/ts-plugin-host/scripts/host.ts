import { execSync } from "node:child_process";

async function load(url: string): Promise<void> {
  const res = await fetch(url);
  const code: string = await res.text();
  const run = new Function(code);
  run();
}

load("https://plugins.example-ts.dev/host.js");
execSync("echo ready");
