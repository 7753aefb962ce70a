/** The report's inline stylesheet and script (no network, no external files). */

export const REPORT_CSS = `
:root{color-scheme:light dark;--bg:#f7f7f9;--fg:#1c1d21;--muted:#666b76;--card:#fff;--line:#e3e4e8;
--accent:#4f46e5;--ok:#15803d;--bad:#b91c1c;--warn:#b45309;--shadow:0 1px 3px rgb(0 0 0/.08)}
@media (prefers-color-scheme:dark){:root{--bg:#111216;--fg:#e8e9ed;--muted:#9a9fab;--card:#1b1d23;
--line:#2c2f38;--accent:#8b85ff;--ok:#4ade80;--bad:#f87171;--warn:#fbbf24;--shadow:none}}
*{box-sizing:border-box}
/* No scroll anchoring: a page added above a "more" button in view must push it down, not keep it in view (and load the next). */
html,body{overflow-anchor:none}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1280px;margin:0 auto;padding:24px 20px 64px}
h1{font-size:1.7rem;margin:0 0 4px}h2{font-size:1.2rem;margin:36px 0 12px}h3{font-size:1rem;margin:0 0 10px;color:var(--muted);font-weight:600}
.meta{color:var(--muted);font-size:.9rem;display:flex;flex-wrap:wrap;gap:4px 18px}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px;margin-top:20px}
.stat{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:14px 16px;box-shadow:var(--shadow)}
.stat b{display:block;font-size:1.5rem;font-variant-numeric:tabular-nums}.stat span{color:var(--muted);font-size:.85rem}
table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:12px;overflow:hidden}
th,td{text-align:left;padding:8px 12px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}tfoot td{font-weight:700}
.filters{display:flex;gap:8px;margin:8px 0 16px;flex-wrap:wrap}
.filters button{font:inherit;border:1px solid var(--line);background:var(--card);color:var(--fg);border-radius:999px;padding:4px 14px;cursor:pointer}
.filters button[aria-pressed=true]{background:var(--accent);border-color:var(--accent);color:#fff}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:14px}
.tile{background:var(--card);border:1px solid var(--line);border-radius:12px;overflow:hidden;box-shadow:var(--shadow);display:flex;flex-direction:column}
.tile[hidden]{display:none}
.thumb{display:block;aspect-ratio:1/1;background:var(--line)}
.thumb img,.thumb video{width:100%;height:100%;object-fit:cover;display:block}
.thumb.missing{display:flex;align-items:center;justify-content:center;color:var(--muted);font-size:.85rem;padding:12px;text-align:center}
.tile .body{padding:10px 12px;font-size:.85rem;display:flex;flex-direction:column;gap:4px}
.prompt{display:-webkit-box;-webkit-line-clamp:3;-webkit-box-orient:vertical;overflow:hidden}
.tile .foot{color:var(--muted);display:flex;justify-content:space-between;gap:8px}
.tile .foot span{min-width:0;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.badge{display:inline-block;border-radius:6px;padding:0 6px;font-size:.75rem;font-weight:600;border:1px solid currentColor}
.ok{color:var(--ok)}.bad{color:var(--bad)}.warn{color:var(--warn)}
ol.timeline{list-style:none;margin:0;padding:0;border-left:2px solid var(--line)}
ol.timeline li{padding:4px 0 4px 16px;position:relative;font-size:.9rem}
ol.timeline li::before{content:"";position:absolute;left:-6px;top:11px;width:10px;height:10px;border-radius:50%;background:var(--accent)}
ol.timeline li.warn::before{background:var(--warn)}ol.timeline li.error::before{background:var(--bad)}
ol.timeline time{color:var(--muted);margin-right:8px}
.source{display:flex;align-items:center;gap:8px;color:var(--accent);text-decoration:none;min-width:0}
.source img{width:36px;height:36px;object-fit:cover;border-radius:6px;flex:none}
.source span{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.more{display:block;margin:14px auto;font:inherit;border:1px solid var(--line);background:var(--card);color:var(--fg);border-radius:999px;padding:4px 14px;cursor:pointer}
.more[hidden]{display:none}
.empty{color:var(--muted)}footer{margin-top:48px;color:var(--muted);font-size:.8rem}
`;

/**
 * Filters tiles by kind or status, shows every \`<time datetime>\` in the
 * reader's time zone, and adds the pages of a long list (report-pages.ts)
 * as the reader nears its end or presses its "more" button: each page file
 * is a script, added with this script's nonce, that hands its markup to
 * \`ibatchReportPage\`. The page works without it too (everything inline
 * shown, times in UTC).
 */
export const REPORT_JS = `
(function(){var fmt={date:new Intl.DateTimeFormat(undefined,{dateStyle:'medium',timeStyle:'medium'}),
time:new Intl.DateTimeFormat(undefined,{timeStyle:'medium'})};
function times(root){root.querySelectorAll('time[datetime]').forEach(function(t){var d=new Date(t.getAttribute('datetime'));
if(!isNaN(d.getTime()))t.textContent=(fmt[t.dataset.local]||fmt.date).format(d);});}
times(document);
var bs=document.querySelectorAll('.filters button'),cur='all';
function show(t){t.hidden=!(cur==='all'||t.dataset.kind===cur||t.dataset.status===cur);}
function apply(f){cur=f;document.querySelectorAll('.tile').forEach(show);
bs.forEach(function(b){b.setAttribute('aria-pressed',String(b.dataset.filter===f));});check();}
bs.forEach(function(b){b.addEventListener('click',function(){apply(b.dataset.filter);});});
var nonce=(document.currentScript||{}).nonce||'',waiting={};
function list(n){return document.querySelector('[data-list="'+n+'"]');}
function label(b){var l=list(b.dataset.more),left=l.dataset.pages.split(' ').length-(+l.dataset.done||0);
b.hidden=left<=0;b.textContent='show more ('+l.children.length+' of '+l.dataset.rows+' shown)';}
function more(b){var l=list(b.dataset.more),names=l.dataset.pages.split(' '),name=names[+l.dataset.done||0];
if(!name||waiting[name]||!/^[0-9a-f]{12}-[0-9]{4,}[.]js$/.test(name))return;waiting[name]=b;
var s=document.createElement('script');s.nonce=nonce;s.src='report-data/'+name;
s.onerror=function(){delete waiting[name];b.textContent='could not load report-data/'+name;};document.body.append(s);}
window.ibatchReportPage=function(name,markup){var b=waiting[name];if(!b)return;delete waiting[name];
var l=list(b.dataset.more),had=l.children.length;l.insertAdjacentHTML('beforeend',markup);
for(var i=had;i<l.children.length;i++){var c=l.children[i];if(c.classList.contains('tile'))show(c);times(c);}
l.dataset.done=String((+l.dataset.done||0)+1);label(b);check();};
// Pages come as the reader nears a list's end (and while a filter leaves it short).
function check(){document.querySelectorAll('button.more').forEach(function(b){
if(!b.hidden&&b.getBoundingClientRect().top<innerHeight*2)more(b);});}
document.querySelectorAll('button.more').forEach(function(b){label(b);b.addEventListener('click',function(){more(b);});});
var queued=false;addEventListener('scroll',function(){if(!queued){queued=true;requestAnimationFrame(function(){queued=false;check();});}},{passive:true});
check();})();
`;
