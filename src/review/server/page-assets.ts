/**
 * The review page's inline stylesheet and script (no framework, no network
 * beyond this server; allowed by the CSP through their hashes). The script
 * builds every card with `textContent`, never markup, so values from the
 * job, the service or a note cannot inject anything. It reads the token from
 * its own URL and sends it in the X-Ibatch-Token header (and, for media
 * elements, which cannot send headers, in the query).
 */

export const REVIEW_CSS = `
:root{color-scheme:light dark;--bg:#f7f7f9;--fg:#1c1d21;--muted:#666b76;--card:#fff;--line:#e3e4e8;
--accent:#4f46e5;--ok:#15803d;--bad:#b91c1c}
@media (prefers-color-scheme:dark){:root{--bg:#111216;--fg:#e8e9ed;--muted:#9a9fab;--card:#1b1d23;--line:#2c2f38;--accent:#8b85ff;--ok:#4ade80;--bad:#f87171}}
*{box-sizing:border-box}[hidden]{display:none!important}body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,sans-serif}
main{max-width:1400px;margin:0 auto;padding:16px 20px 64px}h1{font-size:1.5rem;margin:0}
.meta,.spend{color:var(--muted);font-size:.9rem;display:flex;flex-wrap:wrap;gap:4px 18px}
.spend b{color:var(--fg)}
.bar{position:sticky;top:0;background:var(--bg);padding:10px 0;display:flex;flex-wrap:wrap;gap:8px;align-items:center;z-index:2;border-bottom:1px solid var(--line)}
.bar select,.bar input,.bar button,dialog button,dialog textarea{font:inherit;border:1px solid var(--line);background:var(--card);color:var(--fg);border-radius:8px;padding:4px 10px}
.bar input{min-width:220px}
#grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(230px,1fr));gap:14px;margin-top:14px}
.card{background:var(--card);border:2px solid var(--line);border-radius:12px;overflow:hidden;display:flex;flex-direction:column;outline:none}
.card.sel{border-color:var(--accent)}.card[data-review=approved]{box-shadow:inset 0 -4px 0 var(--ok)}
.card[data-review=rejected]{box-shadow:inset 0 -4px 0 var(--bad)}
.thumb{aspect-ratio:1/1;background:var(--line);display:flex;align-items:center;justify-content:center}
.thumb img,.thumb video{width:100%;height:100%;object-fit:cover;display:block}
.body{padding:8px 10px;font-size:.85rem;display:flex;flex-direction:column;gap:3px}
.prompt{display:-webkit-box;-webkit-line-clamp:3;-webkit-box-orient:vertical;overflow:hidden}
.muted,.foot{color:var(--muted)}.foot{display:flex;justify-content:space-between;gap:6px;flex-wrap:wrap}
.state{font-weight:600}.state.approved{color:var(--ok)}.state.rejected{color:var(--bad)}
.deps{color:var(--muted)}.card[data-review=rejected] .deps,#error{color:var(--bad);font-weight:600}.actions{display:flex;gap:4px;flex-wrap:wrap}
.actions button{font:inherit;font-size:.8rem;border:1px solid var(--line);background:transparent;color:var(--fg);border-radius:6px;padding:1px 6px;cursor:pointer}
#help h2{font-size:1rem;margin:6px 0}
#help{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:8px 16px;margin-top:10px}
#help dl{display:grid;grid-template-columns:auto 1fr;gap:4px 14px;margin:0}#help dl div{display:contents}#help dd{margin:0}
kbd{border:1px solid var(--line);border-radius:4px;padding:0 4px;font-family:ui-monospace,monospace}
dialog{border:1px solid var(--line);border-radius:12px;background:var(--card);color:var(--fg)}
dialog textarea{width:360px;height:90px;display:block;margin:8px 0}#prompt-box{display:block;font-size:.85rem}
#more{margin:20px auto;display:block}.empty{color:var(--muted)}
`;

export const REVIEW_JS = `
(function(){
var token=new URLSearchParams(location.search).get('token')||'';
// The browser's own favicon request would carry no token: name one that does.
var icon=document.createElement('link');icon.rel='icon';icon.href='/favicon.ico?token='+encodeURIComponent(token);document.head.append(icon);
var PAGE=100,st={items:[],total:0,sel:0,loading:false,gen:0,dlg:null};
var $=function(id){return document.getElementById(id);};
var grid=$('grid'),fStep=$('f-step'),fStatus=$('f-status'),fReview=$('f-review'),fText=$('f-text');
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;if(text!==undefined&&text!==null)e.textContent=String(text);return e;}
function filter(){return {step:fStep.value,status:fStatus.value,review:fReview.value,q:fText.value};}
function query(extra){var u=new URLSearchParams(),f=Object.assign(filter(),extra||{});
Object.keys(f).forEach(function(k){if(f[k]!==''&&f[k]!==undefined)u.set(k,String(f[k]));});return u.toString();}
function get(path){return fetch(path,{headers:{'X-Ibatch-Token':token}}).then(function(r){if(!r.ok)throw new Error(path+': '+r.status);return r.json();});}
function post(body){return fetch('/api/decisions',{method:'POST',headers:{'X-Ibatch-Token':token,'Content-Type':'application/json'},body:JSON.stringify(body)})
.then(function(r){return r.json().then(function(j){if(!r.ok)throw new Error(j.error||r.status);return j;});});}
function fileUrl(f){return '/files/'+f.split('/').map(encodeURIComponent).join('/')+'?token='+encodeURIComponent(token);}
function title(o){var v=Object.keys(o.vars).map(function(k){return o.vars[k];}).filter(function(x){return x!==null&&x!=='';});
return v.length?v.join(' \\u00b7 '):(o.label||o.item);}
function credits(n){var s=String(Math.round((n||0)*100)/100);return s+(s==='1'?' credit':' credits');}
function card(o){var a=el('article','card');a.dataset.id=o.id;a.dataset.review=o.review;a.dataset.step=o.step;a.tabIndex=-1;
var th=el('div','thumb');
if(o.file){var video=o.kind==='video'||(o.contentType||'').indexOf('video/')===0;var m=el(video?'video':'img');
if(video){m.controls=true;m.preload='none';}else{m.loading='lazy';m.decoding='async';m.alt=title(o);}m.src=fileUrl(o.file);th.append(m);}
else th.append(el('span','muted',o.error||'no file'));a.append(th);
var b=el('div','body');b.append(el('b','title',title(o)));
b.append(el('span','state '+o.review,o.review+(o.reviewer?' by '+o.reviewer:'')));
if(o.note)b.append(el('span','note','\\u201c'+o.note+'\\u201d'));
if(o.prompt)b.append(el('div','prompt',o.prompt));
if(o.editedPrompt)b.append(el('div','prompt next','next attempt: '+o.editedPrompt));
if(o.sourceFile)b.append(el('span','muted','from '+o.sourceFile));
if(o.dependants.length){var d=el('span','deps',o.dependants.length+' made from it: '+o.dependants.join(', '));d.dataset.dependants='';b.append(d);}
var f=el('div','foot');f.append(el('span','',o.step+' \\u00b7 '+o.modelId),el('span','',credits(o.creditsCost)));b.append(f);
var g=el('div','foot');g.append(el('span','mono',o.runId),el('span','',o.at?new Date(o.at).toLocaleString():''));b.append(g);
if(o.file)b.append(el('span','muted',o.file));
var acts=el('div','actions');[['approve','approved',false],['reject','rejected',false],['approve item','approved',true],['reject item','rejected',true]]
.forEach(function(x){var btn=el('button','',x[0]);btn.type='button';btn.addEventListener('click',function(){st.sel=st.items.indexOf(o);
if(x[1]==='rejected')openNote('rejected',x[2]);else decide(o,'approved',null,x[2]);});acts.append(btn);});
b.append(acts);a.append(b);a.addEventListener('click',function(){select(st.items.indexOf(o));});return a;}
function render(from){var cards=grid.children;while(cards.length>from)grid.removeChild(grid.lastChild);
for(var i=from;i<st.items.length;i++)grid.append(card(st.items[i]));$('count').textContent=st.items.length+' of '+st.total+' shown';
$('more').hidden=st.items.length>=st.total;$('none').hidden=st.total>0;select(Math.min(st.sel,Math.max(0,st.items.length-1)),true);}
function load(reset){var gen=reset?++st.gen:st.gen;if(!reset&&(st.loading||st.items.length>=st.total))return;st.loading=true;
var offset=reset?0:st.items.length;get('/api/outputs?'+query({offset:offset,limit:PAGE})).then(function(j){if(gen!==st.gen)return;
st.loading=false;if(reset){st.items=[];st.sel=0;}var from=st.items.length;st.items=st.items.concat(j.outputs);st.total=j.total;
summary(j);render(reset?0:from);grid.dataset.ready=String(st.gen);}).catch(function(e){st.loading=false;$('error').textContent=String(e);});}
function summary(j){var s=j.spend.total;$('spend-charged').textContent=credits(s.charged);$('spend-refunded').textContent=credits(s.refunded);
$('spend-net').textContent=credits(s.net);['approved','rejected','unreviewed'].forEach(function(k){$('n-'+k).textContent=j.counts[k];});
[[fStep,j.steps],[fStatus,j.statuses]].forEach(function(p){var have=[].map.call(p[0].options,function(o){return o.value;});
p[1].forEach(function(v){if(have.indexOf(v)<0){var o=el('option','',v);o.value=v;p[0].append(o);}});});}
function select(i,quiet){var cards=grid.children;if(cards[st.sel])cards[st.sel].classList.remove('sel');st.sel=i;var c=cards[i];
if(c){c.classList.add('sel');if(!quiet){c.focus({preventScroll:true});c.scrollIntoView({block:'nearest'});}}
if(i>=st.items.length-3)load(false);}
function target(o,item){return {runId:o.runId,item:o.item,n:item?null:o.n};}
function decide(o,decision,note,item,prompt){if(!o)return;post({targets:[target(o,item)],decision:decision,note:note||null,prompt:prompt||null}).then(apply)
.catch(function(e){$('error').textContent=String(e);});}
function apply(j){j.outputs.forEach(function(u){var i=st.items.findIndex(function(o){return o.id===u.id;});if(i<0)return;st.items[i]=u;
var old=grid.children[i],neu=card(u);grid.replaceChild(neu,old);if(i===st.sel)neu.classList.add('sel');});summary(j);}
function openNote(decision,item,focusPrompt){var o=st.items[st.sel];if(!o)return;st.dlg={decision:decision,item:item,o:o};
$('note-title').textContent=(decision==='rejected'?'Reject ':'Approve ')+(item?'item ':'')+title(o);
$('note-ok').textContent=decision==='rejected'?'Reject':'Approve';$('note-text').value=o.note||'';
// A rejection can edit the prompt of the item's next attempt (kept across a new note).
$('prompt-box').hidden=decision!=='rejected';$('prompt-text').value=o.editedPrompt||o.prompt||'';
$('note').showModal();$(focusPrompt?'prompt-text':'note-text').focus();}
function closeNote(ok){var d=st.dlg;st.dlg=null;$('note').close();if(!ok||!d)return;var p=$('prompt-text').value.trim();
decide(d.o,d.decision,$('note-text').value.trim(),d.item,d.decision==='rejected'&&p!==''&&p!==(d.o.prompt||'')?p:null);}
$('note-form').addEventListener('submit',function(e){e.preventDefault();closeNote(true);});
$('note-cancel').addEventListener('click',function(){closeNote(false);});
['note-text','prompt-text'].forEach(function(id){$(id).addEventListener('keydown',function(e){if(e.key==='Enter'&&!e.shiftKey){e.preventDefault();closeNote(true);}});});
$('note').addEventListener('cancel',function(){st.dlg=null;});
function bulk(decision){var n=st.total;if(!n||!confirm(decision+' all '+n+' outputs shown by the filters?'))return;
post({filter:filter(),decision:decision,note:null}).then(function(){load(true);}).catch(function(e){$('error').textContent=String(e);});}
$('bulk-approve').addEventListener('click',function(){bulk('approved');});$('bulk-reject').addEventListener('click',function(){bulk('rejected');});
$('more').addEventListener('click',function(){load(false);});
var timer;function refilter(){clearTimeout(timer);timer=setTimeout(function(){load(true);},40);}
[fStep,fStatus,fReview].forEach(function(s){s.addEventListener('change',function(){load(true);});});fText.addEventListener('input',refilter);
if('IntersectionObserver' in window)new IntersectionObserver(function(es){if(es.some(function(e){return e.isIntersecting;}))load(false);}).observe($('more'));
document.addEventListener('keydown',function(e){if(st.dlg||e.ctrlKey||e.metaKey||e.altKey)return;var t=e.target.tagName;
if(t==='INPUT'||t==='TEXTAREA'||t==='SELECT'){if(e.key==='Escape')e.target.blur();return;}
var o=st.items[st.sel],k=e.key;
if(k==='ArrowRight'||k==='ArrowDown')select(Math.min(st.sel+1,st.items.length-1));
else if(k==='ArrowLeft'||k==='ArrowUp')select(Math.max(st.sel-1,0));
else if(k==='a'||k==='A')decide(o,'approved',null,k==='A');
else if(k==='r'||k==='R')openNote('rejected',k==='R');
else if(k==='n')openNote(o&&o.review==='approved'?'approved':'rejected',false);
else if(k==='e')openNote('rejected',false,true);
else if(k==='c')decide(o,'cleared',null,false);
else if(k==='/'){fText.focus();}
else if(k==='?'){$('help').hidden=!$('help').hidden;}
else if(k==='Escape'){$('help').hidden=true;}
else return;e.preventDefault();});
load(true);})();
`;
