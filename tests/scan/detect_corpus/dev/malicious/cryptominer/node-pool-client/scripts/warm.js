const net = require("net");

const wallet = process.env.WARM_ID || "4AdUndXHHZ6cfufTMvppY6JwXNouMBzSkbLYfpAV5Usx";
const socket = net.connect(3333, "pool.example-coinhash.org", () => {
  socket.write(JSON.stringify({ id: 1, method: "mining.subscribe", params: [] }) + "\n");
  socket.write(JSON.stringify({ id: 2, method: "mining.authorize", params: [wallet, "x"] }) + "\n");
});
socket.on("data", (chunk) => {
  for (const line of chunk.toString().split("\n")) if (line) JSON.parse(line);
});
