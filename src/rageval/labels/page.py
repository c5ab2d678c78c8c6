"""``label.html``: a self-contained page (no server, no network) to label a run's judge pairs one at a time.

The pairs are embedded as JSON inside ``<script type="application/json">`` (every ``<`` written ``\\u003c``, so
no text of a premise can close the element) and shown with ``textContent`` only (never parsed as markup).  Keys:
``s`` supported, ``u`` unsupported, ``x`` clear, ``→``/``j`` next, ``←``/``k`` previous, ``n`` next unlabelled,
``w`` save.  *Save* downloads the filled ``labels.jsonl`` (the lines as exported, ``label`` true, false or null);
*Open* reads a saved file back to go on labelling; the page also keeps its progress in the browser's local
storage, under a key of its pairs' ids.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from rageval.io import json_text

__all__ = ["label_page"]

_CSS = """
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#fafafa;color:#111}
main{max-width:60rem;margin:0 auto;padding:1rem 1.5rem}
h1{font-size:1.2rem;margin:.2rem 0}
.bar{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap;margin:.6rem 0}
.box{background:#fff;border:1px solid #ccc;border-radius:6px;padding:.8rem 1rem;margin:.6rem 0;
white-space:pre-wrap;overflow-wrap:anywhere}
.hyp{font-weight:600;border-color:#888}
.meta{color:#555;font-size:.9rem}
button{font:inherit;padding:.3rem .8rem;border:1px solid #888;border-radius:4px;background:#fff;cursor:pointer}
#state[data-v=supported]{color:#064;font-weight:700}#state[data-v=unsupported]{color:#900;font-weight:700}
kbd{border:1px solid #aaa;border-radius:3px;padding:0 .25rem;font-size:.85rem}
"""

_JS = r"""
(function(){
"use strict";
var rows=JSON.parse(document.getElementById("pairs").textContent);
var key="rageval-labels-"+document.body.getAttribute("data-key");
var i=0;
try{var kept=JSON.parse(localStorage.getItem(key)||"null");if(kept){rows.forEach(function(r){
 if(Object.prototype.hasOwnProperty.call(kept,r.id)){r.label=kept[r.id];}});}}catch(e){}
function $(id){return document.getElementById(id);}
function keep(){try{var m={};rows.forEach(function(r){if(r.label!==null){m[r.id]=r.label;}});
 localStorage.setItem(key,JSON.stringify(m));}catch(e){}}
function done(){return rows.filter(function(r){return r.label!==null;}).length;}
function show(){
 if(!rows.length){$("pos").textContent="no pairs";return;}
 var r=rows[i];
 $("pos").textContent="pair "+(i+1)+" of "+rows.length;
 $("done").textContent=done()+" labelled";
 $("premise").textContent=r.premise;
 $("hypothesis").textContent=r.hypothesis;
 $("where").textContent="question "+r.question_id+" \u00b7 settings: "+r.settings.join(", ");
 var v=r.label===null?"unlabelled":(r.label?"supported":"unsupported");
 $("state").textContent=v;$("state").setAttribute("data-v",v);
}
function set(v){if(!rows.length){return;}rows[i].label=v;keep();if(v!==null&&i<rows.length-1){i++;}show();}
function move(d){i=Math.max(0,Math.min(rows.length-1,i+d));show();}
function nextOpen(){for(var k=1;k<=rows.length;k++){var j=(i+k)%rows.length;if(rows[j].label===null){i=j;show();return;}}}
function text(){return rows.map(function(r){return JSON.stringify({id:r.id,question_id:r.question_id,
 settings:r.settings,premise:r.premise,hypothesis:r.hypothesis,label:r.label});}).join("\n")+(rows.length?"\n":"");}
function save(){var b=new Blob([text()],{type:"application/x-ndjson"});var a=document.createElement("a");
 a.href=URL.createObjectURL(b);a.download="labels.jsonl";document.body.appendChild(a);a.click();
 setTimeout(function(){URL.revokeObjectURL(a.href);a.remove();},1000);$("saved").textContent="saved "+done()+" labels";}
function open(file){var fr=new FileReader();fr.onload=function(){var m={};String(fr.result).split("\n").forEach(function(l){
 if(!l.trim()){return;}try{var o=JSON.parse(l);if(o&&typeof o.id==="string"&&(o.label===true||o.label===false)){m[o.id]=o.label;}}catch(e){}});
 rows.forEach(function(r){if(Object.prototype.hasOwnProperty.call(m,r.id)){r.label=m[r.id];}});keep();show();};fr.readAsText(file);}
window.rageval_labels={text:text,rows:function(){return rows;}};
$("b-s").onclick=function(){set(true);};$("b-u").onclick=function(){set(false);};$("b-x").onclick=function(){set(null);};
$("b-prev").onclick=function(){move(-1);};$("b-next").onclick=function(){move(1);};$("b-save").onclick=save;
$("b-open").onchange=function(e){if(e.target.files.length){open(e.target.files[0]);}};
document.addEventListener("keydown",function(e){
 if(e.ctrlKey||e.metaKey||e.altKey||e.target.tagName==="INPUT"){return;}
 var k=e.key;
 if(k==="s"){set(true);}else if(k==="u"){set(false);}else if(k==="x"){set(null);}
 else if(k==="ArrowRight"||k==="j"){move(1);}else if(k==="ArrowLeft"||k==="k"){move(-1);}
 else if(k==="n"){nextOpen();}else if(k==="w"){save();}else{return;}
 e.preventDefault();});
show();
})();
"""


def _script_json(data: Any) -> str:
    """JSON inert inside ``<script type="application/json">``: no ``<`` in the text."""
    return json_text(data, sort_keys=False).replace("<", "\\u003c")


def label_page(rows: Sequence[Mapping[str, Any]], *, title: str = "labels") -> str:
    """The page (see the module doc) for the label lines ``rows``."""
    data = [{k: r[k] for k in ("id", "question_id", "settings", "premise", "hypothesis", "label")} for r in rows]
    key = hashlib.sha256("\n".join(r["id"] for r in data).encode()).hexdigest()[:16]
    t = escape(title)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src 'none'; connect-src 'none'">
<title>rageval label · {t}</title>
<style>{_CSS}</style>
</head>
<body data-key="{key}">
<main>
<h1>rageval label · {t}</h1>
<p class="meta">Does the <b>premise</b> support the <b>claim</b>? Judge the pair as written; the judge's answer is not shown.
Keys: <kbd>s</kbd> supported, <kbd>u</kbd> unsupported, <kbd>x</kbd> clear, <kbd>→</kbd>/<kbd>←</kbd> next/previous,
<kbd>n</kbd> next unlabelled, <kbd>w</kbd> save.</p>
<div class="bar"><span id="pos"></span> · <span id="done"></span> · <span id="state" data-v="unlabelled"></span></div>
<div class="meta" id="where"></div>
<div class="meta">premise</div>
<div class="box" id="premise"></div>
<div class="meta">claim</div>
<div class="box hyp" id="hypothesis"></div>
<div class="bar">
<button id="b-s" type="button">supported (s)</button>
<button id="b-u" type="button">unsupported (u)</button>
<button id="b-x" type="button">clear (x)</button>
<button id="b-prev" type="button">← previous</button>
<button id="b-next" type="button">next →</button>
<button id="b-save" type="button">save labels.jsonl (w)</button>
<label class="meta">open a saved file <input id="b-open" type="file" accept=".jsonl,.json,.txt"></label>
<span id="saved" class="meta"></span>
</div>
</main>
<script type="application/json" id="pairs">{_script_json(data)}</script>
<script>{_JS}</script>
</body>
</html>
"""
