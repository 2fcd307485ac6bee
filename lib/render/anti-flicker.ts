// Anti-flicker snippets (docs/api.md, "What a render does"): A/B-testing and personalisation tools
// hide the whole page until their script has changed it, and reveal it on their own timeout (1 to 4
// s) when the script never comes: with trackers blocked, or their host slow, a capture taken before
// that is blank. When the script has not come by the time the page is captured, the page is revealed
// as that timeout would reveal it, at once. Snippets are recognised by their vendors' own markers,
// from their published snippets, never by what the page looks like: a page that hides itself with
// its own CSS stays as it is.

/**
 * Reveals a page an anti-flicker snippet still hides; answers the markers it removed. A string, as
 * LoadedPage.evaluate takes scripts.
 */
export const REVEAL = `(() => {
  const revealed = [];
  const html = document.documentElement;
  // Google Optimize: a class on <html> ("async-hide" unless renamed) that dataLayer.hide.end() removes.
  const optimize = window.dataLayer && window.dataLayer.hide;
  if (optimize && typeof optimize.end === "function") {
    try { optimize.end(); } catch {}
    optimize.end = null;
    revealed.push("google-optimize");
  }
  // Yandex Varioqub: a class on <html> that ymab.antiFlicker.callback() removes.
  const varioqub = window.ymab && window.ymab.antiFlicker;
  if (varioqub && typeof varioqub.callback === "function") {
    try { varioqub.callback(); } catch {}
    revealed.push("varioqub");
  }
  // Optimizely's non-blocking install: the page unmasks itself in a listener for the "campaignDecided"
  // lifecycle event, queued on window.optimizely, which stays an array until Optimizely's script comes.
  if (Array.isArray(window.optimizely)) {
    for (const item of window.optimizely) {
      const filter = item && item.type === "addListener" && item.filter;
      if (filter && filter.type === "lifecycle" && filter.name === "campaignDecided" && typeof item.handler === "function") {
        try { item.handler(); } catch {}
        revealed.push("optimizely");
      }
    }
  }
  // The style elements the snippets add, by the ids they give them: VWO, Adobe Target (at.js),
  // Adobe's Web SDK, Kameleoon, Amplitude Experiment, ABsmartly, Chartbeat, Convert, Optimizely.
  for (const id of ["_vis_opt_path_hides", "at-body-style", "alloy-prehiding", "kameleoonLoadingStyleSheet", "amp-exp-css", "absmartly-antiflicker", "chartbeat-flicker-control-style", "convert-hide-body", "optimizely-mask"]) {
    const style = document.getElementById(id);
    if (style && style.tagName === "STYLE") { style.remove(); revealed.push(id); }
  }
  // Another tool's: a <style> whose id says it prevents flicker or pre-hides, and whose rule hides the whole page.
  for (const style of document.querySelectorAll("style[id]")) {
    if (/flicker|prehid/i.test(style.id) && /(^|[\\s,}])(html|body|\\*)\\s*(,[^{]*)?\\{[^}]*(opacity\\s*:\\s*0|visibility\\s*:\\s*hidden|display\\s*:\\s*none)/i.test(style.textContent || "")) {
      style.remove();
      revealed.push(style.id);
    }
  }
  return revealed;
})()`;
