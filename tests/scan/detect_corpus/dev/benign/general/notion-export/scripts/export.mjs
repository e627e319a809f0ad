const page = process.argv[2];
const res = await fetch(`https://api.notion.com/v1/blocks/${page}/children`, {
  headers: {
    Authorization: `Bearer ${process.env.NOTION_TOKEN}`,
    "Notion-Version": "2022-06-28",
  },
});
const { results } = await res.json();
for (const block of results) {
  const rich = block[block.type]?.rich_text ?? [];
  console.log(rich.map((t) => t.plain_text).join(""));
}
