import fs from "node:fs";

const text = fs.readFileSync(process.argv[2], "utf8");
const res = await fetch("https://api.openai.com/v1/chat/completions", {
  method: "POST",
  headers: {
    "Content-Type": "application/json",
    Authorization: `Bearer ${process.env.OPENAI_API_KEY}`,
  },
  body: JSON.stringify({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: `Summarise:\n${text}` }],
  }),
});
const data = await res.json();
console.log(data.choices[0].message.content);
