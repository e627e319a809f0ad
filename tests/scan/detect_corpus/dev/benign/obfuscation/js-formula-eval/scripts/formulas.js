const formulas = { total: "return row.price * row.qty", tax: "return row.price * row.qty * 0.2" };
const compiled = {};
for (const [name, body] of Object.entries(formulas)) {
  compiled[name] = new Function("row", body);
}
const row = { price: 4, qty: 3 };
console.log(compiled.total(row), compiled.tax(row));
