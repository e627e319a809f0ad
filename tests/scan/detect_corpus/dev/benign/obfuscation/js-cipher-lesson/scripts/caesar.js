function shift(text, by) {
  return Array.from(text)
    .map((c) => (/[a-z]/.test(c) ? String.fromCharCode(((c.charCodeAt(0) - 97 + by) % 26) + 97) : c))
    .join("");
}

const [message, by] = process.argv.slice(2);
const encoded = shift(message, Number(by));
console.log(encoded);
console.log(shift(encoded, 26 - Number(by)));
