if (+process.versions.node.split('.')[0] < 18) { console.error('Node 18+ needed'); process.exit(1); }
