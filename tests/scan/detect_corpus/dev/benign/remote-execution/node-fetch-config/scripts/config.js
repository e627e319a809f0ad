const res = await fetch("https://config.example.com/app.json");
const config = await res.json();
console.log(Object.keys(config).join(", "));
