"""What the report's page carries besides its sections: the Content-Security-Policy, the CSS,
and the few lines of JavaScript (errors and blocked requests recorded, sortable tables, the
check the tests read back from the browser)."""

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

CSS = """
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#222;background:#f6f7f9}
header{background:#1f2d3d;color:#fff;padding:16px 28px}header h1{margin:0 0 4px;font-size:22px}
header p{margin:0;color:#c8d3df;font-size:13px}main{padding:8px 28px 40px;max-width:1300px}
section{background:#fff;border:1px solid #dde2e8;border-radius:6px;margin:16px 0;padding:12px 18px}
h2{font-size:18px;margin:4px 0 8px}.kpis{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}
.kpi{border:1px solid #dde2e8;border-radius:5px;padding:6px 12px;min-width:120px}
.kpi b{display:block;font-size:18px}.kpi span{color:#667;font-size:12px}
figure.chart{margin:10px 0 16px}figcaption b{display:block;font-size:15px}
.reading{display:block;color:#556;font-size:13px;margin:2px 0 4px}.note{color:#778;font-size:12px;margin:2px 0}
.legend{font-size:12px;margin:2px 0 4px}.legend span{margin-right:14px;white-space:nowrap}
.legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px;border-radius:2px}
svg{max-width:100%;height:auto;font-size:11px}svg .grid{stroke:#e6e9ee}svg .axis{stroke:#667}
svg .plot{fill:#fcfcfd}svg .tick{fill:#556}svg .lab{fill:#222}svg .val{fill:#556;font-size:10px}
svg .axt{fill:#334;font-size:12px}svg polyline{fill:none;stroke-width:1.6}svg .ref{stroke-width:2}
svg circle.mark{fill-opacity:.75}
table{border-collapse:collapse;font-size:12.5px;margin:6px 0 12px}th,td{padding:3px 9px;border-bottom:1px solid #eceff3}
th{background:#f0f3f6;cursor:pointer;user-select:none;text-align:left;white-space:nowrap}
th[data-dir=asc]::after{content:" ▲"}th[data-dir=desc]::after{content:" ▼"}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.name{max-width:min(560px,45vw);white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.tw{overflow-x:auto;max-width:100%}
.warn{background:#fff7e0;border:1px solid #ecd28b;border-radius:5px;padding:8px 14px;margin:6px 0}.warn ul{margin:4px 0 0;padding-left:20px}.flag{color:#c0392b;font-weight:600}.empty{color:#889}
#tc-check{display:none}
"""

# First thing in <head>: record script errors and requests the CSP blocked, wherever they happen.
HEAD_JS = r"""
var tcErrors=[];
function tcErr(m){tcErrors.push(m);try{if(window.tcCheck)tcCheck();}catch(e){}}
window.onerror=function(m,s,l){tcErr(String(m)+' @'+l);};
document.addEventListener('securitypolicyviolation',function(e){tcErr('blocked '+e.blockedURI+' ('+e.violatedDirective+')');});
"""

# At the end of <body>: makes tables sortable and writes what the
# browser drew into #tc-check (read by the tests through --dump-dom).
JS = r"""
function tcKey(td){var v=td.getAttribute('data-v');if(v!==null&&v!==''&&!isNaN(+v))return +v;return td.textContent.toLowerCase();}
function tcSort(th){var t=th.closest('table'),b=t.tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th);
var d=th.getAttribute('data-dir')==='desc'?'asc':'desc';Array.prototype.forEach.call(th.parentNode.children,function(h){h.removeAttribute('data-dir');});
th.setAttribute('data-dir',d);var rows=Array.prototype.slice.call(b.rows);
rows.sort(function(x,y){var a=tcKey(x.cells[i]),c=tcKey(y.cells[i]);var r=(typeof a==='number'&&typeof c==='number')?a-c:String(a).localeCompare(String(c));return d==='asc'?r:-r;});
rows.forEach(function(r){b.appendChild(r);});}
document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',function(){tcSort(th);});});
function tcCheck(){var out={charts:[],tables:[],errors:tcErrors};
document.querySelectorAll('figure.chart').forEach(function(f){var n=0,area=0;
f.querySelectorAll('svg .mark').forEach(function(m){var bb=m.getBBox();area+=bb.width*bb.height+bb.width+bb.height;
n+=(m.tagName==='polyline')?m.points.numberOfItems:1;});out.charts.push({id:f.id,marks:n,drawn:area>0});});
document.querySelectorAll('table.sortable').forEach(function(t){out.tables.push({id:t.id,rows:t.tBodies[0].rows.length});});
document.getElementById('tc-check').textContent=JSON.stringify(out);}
window.addEventListener('load',function(){try{tcCheck();}catch(e){}});
try{tcCheck();}catch(e){tcErrors.push('check: '+e);document.getElementById('tc-check').textContent=JSON.stringify({charts:[],errors:tcErrors});}
"""
