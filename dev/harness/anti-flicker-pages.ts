// Fixture pages for anti-flicker snippets (test/integration/controls.test.ts): each vendor's
// published snippet as its customers paste it, with the timeout raised to 20 s (a customer may set
// it; here it proves a render does not wait it out) and its library never arriving (left out, as a
// blocked tracker is, or, for VWO, which loads its own, from an address that never answers). The page
// under it is red with a line of text. `own` is a page that hides itself on purpose.

/** What the snippets hide: a red page with a line of text. */
const PAGE = `<div style="width:100%;height:100vh;background:#ff0000;position:relative"><p style="position:absolute;bottom:0;right:8px;margin:0">Revealed</p></div>`;

/** The vendors' snippets, by the name the fixture path takes. */
export const ANTI_FLICKER_SNIPPETS: Record<string, string> = {
  // support.google.com/optimize/answer/7100284
  "google-optimize": `<style>.async-hide { opacity: 0 !important} </style>
<script>(function(a,s,y,n,c,h,i,d,e){s.className+=' '+y;h.start=1*new Date;
h.end=i=function(){s.className=s.className.replace(RegExp(' ?'+y),'')};
(a[n]=a[n]||[]).hide=h;setTimeout(function(){i();h.end=null},c);h.timeout=c;
})(window,document.documentElement,'async-hide','dataLayer',20000,
{'OPT-XXXXXX':true});</script>`,
  // VWO's asynchronous SmartCode (its library from /zoo/hang: the page's load never comes either).
  vwo: `<script type='text/javascript'>
var _vwo_code=(function(){
var account_id=74130,
settings_tolerance=20000,
library_tolerance=25000,
use_existing_jquery=false,
f=false,d=document;return{use_existing_jquery:function(){return use_existing_jquery;},library_tolerance:function(){return library_tolerance;},finish:function(){if(!f){f=true;var a=d.getElementById('_vis_opt_path_hides');if(a)a.parentNode.removeChild(a);}},finished:function(){return f;},load:function(a){var b=d.createElement('script');b.src=a;b.type='text/javascript';b.innerText;b.onerror=function(){_vwo_code.finish();};d.getElementsByTagName('head')[0].appendChild(b);},init:function(){settings_timer=setTimeout('_vwo_code.finish()',settings_tolerance);var a=d.createElement('style'),b='body{opacity:0 !important;filter:alpha(opacity=0) !important;background:none !important;}',h=d.getElementsByTagName('head')[0];a.setAttribute('id','_vis_opt_path_hides');a.setAttribute('type','text/css');if(a.styleSheet)a.styleSheet.cssText=b;else a.appendChild(d.createTextNode(b));h.appendChild(a);this.load('/zoo/hang?a='+account_id+'&u='+encodeURIComponent(d.URL)+'&r='+Math.random());return settings_timer;}};}());_vwo_settings_timer=_vwo_code.init();
</script>`,
  // Adobe Target's pre-hiding snippet for asynchronous at.js.
  "adobe-target": `<script>
;(function(win, doc, style, timeout) {
  var STYLE_ID = 'at-body-style';
  function getParent() { return doc.getElementsByTagName('head')[0]; }
  function addStyle(parent, id, def) { if (!parent) { return; } var style = doc.createElement('style'); style.id = id; style.innerHTML = def; parent.appendChild(style); }
  function removeStyle(parent, id) { if (!parent) { return; } var style = doc.getElementById(id); if (!style) { return; } parent.removeChild(style); }
  addStyle(getParent(), STYLE_ID, style);
  setTimeout(function() { removeStyle(getParent(), STYLE_ID); }, timeout);
}(window, document, "body {opacity: 0 !important}", 20000));
</script>`,
  // Adobe Experience Platform Web SDK's pre-hiding snippet.
  "adobe-web-sdk": `<script>
!function(e,a,n,t){var i=e.head;if(i){
if (a) return;
var o=e.createElement("style");
o.id="alloy-prehiding",o.innerText=n,i.appendChild(o),setTimeout(function(){o.parentNode&&o.parentNode.removeChild(o)},t)}}
(document, document.location.href.indexOf("adobe_authoring_enabled") !== -1, "body { opacity: 0 !important }", 20000);
</script>`,
  // Kameleoon's installation tag (its anti-flicker part).
  kameleoon: `<script type="text/javascript">
var kameleoonLoadingTimeout = 20000;
window.kameleoonQueue = window.kameleoonQueue || [];
window.kameleoonStartLoadTime = new Date().getTime();
if (! document.getElementById("kameleoonLoadingStyleSheet") && ! window.kameleoonDisplayPageTimeOut)
{
    var kameleoonS = document.getElementsByTagName("script")[0];
    var kameleoonCc = "* { visibility: hidden !important; background-image: none !important; }";
    var kameleoonStn = document.createElement("style");
    kameleoonStn.type = "text/css";
    kameleoonStn.id = "kameleoonLoadingStyleSheet";
    if (kameleoonStn.styleSheet) { kameleoonStn.styleSheet.cssText = kameleoonCc; }
    else { kameleoonStn.appendChild(document.createTextNode(kameleoonCc)); }
    kameleoonS.parentNode.insertBefore(kameleoonStn, kameleoonS);
    window.kameleoonDisplayPage = function(fromEngine)
    {
        if (!fromEngine) { window.kameleoonTimeout = true; }
        if (kameleoonStn.parentNode) { kameleoonStn.parentNode.removeChild(kameleoonStn); }
    };
    window.kameleoonDisplayPageTimeOut = window.setTimeout(window.kameleoonDisplayPage, kameleoonLoadingTimeout);
}
</script>`,
  // Yandex Varioqub's page-hiding snippet.
  varioqub: `<style>.varioqub-antiflicker {opacity: 0 !important;}</style>
<script>
    (function(a,n,t,i,f,li,c,k,e,r){
        a[t]=a[t]||function(){(a[t].a=a[t].a||[]).push(arguments)};n.classList.add(i);c=function(){n.classList.remove(i)};li.callback=c;a[t].antiFlicker=li;setTimeout(c,f);
    })(window, document.documentElement, 'ymab', 'varioqub-antiflicker', 20000, { 'metrika.XXXX': true });
</script>`,
  // Amplitude Experiment's tag (its anti-flicker style).
  amplitude: `<script>
(function () { var s = document.createElement('style'); s.id = 'amp-exp-css';
s.innerText = '* { visibility: hidden !important; background-image: none !important; }';
document.head.appendChild(s); setTimeout(function () { s.remove(); }, 20000); })();
</script>`,
  // Convert's asynchronous install (docs.developers.convert.com, "Anti-Flicker Async Loading"): a
  // style that covers the body with an opaque layer, lifted when its script loads or fails, or on
  // its timeout (2.5 s unless set). Its script from an address that never answers.
  convert: `<style id="convert-hide-body">body{overflow:hidden}body::before{content:"";position:fixed;inset:0;background:#fff;z-index:2147483647}</style>
<script>
(function () { var lift = function () { var s = document.getElementById('convert-hide-body'); if (s) s.parentNode.removeChild(s); };
var t = document.createElement('script'); t.async = true; t.src = '/zoo/hang?convert=100-200';
t.onload = t.onerror = lift; document.head.appendChild(t); setTimeout(lift, 20000); })();
</script>`,
  // Optimizely's non-blocking install, masked by a style of its own id (github.com/optimizely/library,
  // "nonblocking-snippet", option 1): unmasked by a lifecycle listener or its timeout.
  optimizely: `<script>
window.optimizely = window.optimizely || [];
(function () { var done = false; var unmask = function () { if (done) return; done = true; var s = document.querySelector('style#optimizely-mask'); if (s) s.disabled = true; };
window.optimizely.push({ type: 'addListener', filter: { type: 'lifecycle', name: 'campaignDecided' }, handler: unmask });
setTimeout(unmask, 20000); })();
</script>
<style id="optimizely-mask">body{opacity:0}</style>`,
  // The same, masked by a style sheet without an id that the listener disables (option 2).
  "optimizely-sheet": `<script>
window.optimizely = window.optimizely || [];
(function () { var style = document.createElement('style'); document.head.appendChild(style); style.sheet.insertRule('body{opacity:0}', 0);
var done = false; var unmask = function () { if (done) return; done = true; style.sheet.disabled = true; };
window.optimizely.push({ type: 'addListener', filter: { type: 'lifecycle', name: 'campaignDecided' }, handler: unmask });
setTimeout(unmask, 20000); })();
</script>`,
  // Another tool's, known by its style's id and what it hides (a CRO agency's flicker prevention).
  "other-tool": `<script>
(function () { var hide = document.createElement('style'); hide.setAttribute('id', 'FL016_flickerPrevention');
hide.appendChild(document.createTextNode('body {display:none!important}')); document.head.appendChild(hide);
setTimeout(function () { if (document.getElementById('FL016_flickerPrevention')) hide.parentElement.removeChild(hide); }, 20000); })();
</script>`,
};

/**
 * A page that hides itself on purpose, by its own CSS: an ordinary style (no vendor's id), a style
 * whose id names nothing a snippet uses, and the Optimize class without Optimize's snippet.
 */
const OWN = `<style>body{opacity:0}</style><style id="intro">html{visibility:hidden}</style><script>document.documentElement.classList.add("async-hide")</script><style>.async-hide{opacity:0}</style>`;

/** The fixture at /anti-flicker/<name>, or null. */
export function antiFlickerPage(name: string): string | null {
  const head = name === "own" ? OWN : ANTI_FLICKER_SNIPPETS[name];
  if (head === undefined) return null;
  return `<!doctype html><html><head><meta charset="utf-8"><title>${name}</title>${head}<style>html,body{margin:0}</style></head><body>${PAGE}</body></html>`;
}
