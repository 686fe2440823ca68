// The site's number formats for what pages draw themselves: the same rules as
// webapp/core/formatting.py (scores to six decimals, more for tiny values, no float noise;
// percentages to one decimal).
(function () {
  var SCORE_DECIMALS = 6, SIGNIFICANT_DIGITS = 4, PERCENT_DECIMALS = 1;
  function formatScore(value) {
    if (value === null || value === undefined || value === "") return "";
    if (typeof value !== "number") return String(value);
    if (!isFinite(value)) return String(value);
    if (Number.isInteger(value)) return String(value);
    var magnitude = Math.floor(Math.log10(Math.abs(value)));
    var decimals = Math.min(100, Math.max(SCORE_DECIMALS, SIGNIFICANT_DIGITS - 1 - magnitude));
    var text = value.toFixed(decimals);
    if (text.indexOf(".") >= 0) text = text.replace(/0+$/, "").replace(/\.$/, "");
    return text === "-0" || text === "" ? "0" : text;
  }
  function formatPercent(value) {
    if (value === null || value === undefined) return "";
    var text = value.toFixed(PERCENT_DECIMALS);
    if (/^-[0.]*$/.test(text)) text = text.slice(1);
    return text + "%";
  }
  window.mleboardNumbers = {formatScore: formatScore, formatPercent: formatPercent};
})();
