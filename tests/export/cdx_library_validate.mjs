// Validate CycloneDX files with @cyclonedx/cyclonedx-library (npm), strictly.
// Usage: node cdx_library_validate.mjs FILE.json|FILE.xml ...
// Prints one JSON line per file: {"file", "valid", "errors"} (or "unsupported" with the
// reason when the library cannot validate that format here); exits 0 when every supported
// file is valid, 1 when one is not, 2 on a usage or load error.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import process from "node:process";

const require = createRequire(import.meta.url);
let CDX;
try {
  // Resolved from NODE_PATH (the validators .ci/run installs), like any CommonJS module.
  CDX = require("@cyclonedx/cyclonedx-library");
} catch (err) {
  console.error(`cannot load @cyclonedx/cyclonedx-library: ${err.message}`);
  process.exit(2);
}

const versions = {
  "1.6": CDX.Spec.Version.v1dot6,
  "1.7": CDX.Spec.Version.v1dot7,
};

function specVersionOf(text, isXml) {
  if (isXml) {
    const match = /xmlns="http:\/\/cyclonedx\.org\/schema\/bom\/(1\.\d+)"/.exec(text);
    return match ? match[1] : undefined;
  }
  return JSON.parse(text).specVersion;
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node cdx_library_validate.mjs FILE...");
  process.exit(2);
}
let failed = false;
for (const file of files) {
  const text = readFileSync(file, "utf8");
  const isXml = file.endsWith(".xml");
  const version = versions[specVersionOf(text, isXml)];
  if (version === undefined) {
    console.log(JSON.stringify({ file, valid: false, errors: "unknown specVersion" }));
    failed = true;
    continue;
  }
  const validator = isXml
    ? new CDX.Validation.XmlValidator(version)
    : new CDX.Validation.JsonStrictValidator(version);
  try {
    const errors = await validator.validate(text);
    console.log(JSON.stringify({ file, valid: errors === null, errors }));
    failed ||= errors !== null;
  } catch (err) {
    if (err instanceof CDX.Validation.MissingOptionalDependencyError) {
      console.log(JSON.stringify({ file, unsupported: err.message }));
    } else {
      console.log(JSON.stringify({ file, valid: false, errors: String(err) }));
      failed = true;
    }
  }
}
process.exit(failed ? 1 : 0);
