import { Ranking } from "/work/main/js/chomp-tables.js";
import fs from "node:fs";
const m = JSON.parse(fs.readFileSync("/work/runs/l110/manifest.json"));
const R = new Ranking(null, null, 110);
function kids(p){const out=[];p.forEach((len,r)=>{for(let c=0;c<len;c++){if(!r&&!c)continue;const k=[];for(let i=0;i<p.length;i++){const l=i>=r?Math.min(p[i],c):p[i];if(!l)break;k.push(l);}out.push(k);}});return out;}
let seed=4242;function rand(n){seed=(seed*1103515245+12345)%2147483648;return seed%n;}
function randomPosition(n){const parts=[];let left=n;while(left>0){const k=1+rand(Math.min(left,1+rand(24)));parts.push(k);left-=k;}return parts.sort((a,b)=>b-a);}
const positions=[];for(let i=0;i<7;i++)positions.push(randomPosition(110));
for (const pe of [256,128,64,32,16]) {
  let tot=[];
  for (const p of positions) {
    const looks=[p,...kids(p)].map(k=>{const n=k.reduce((a,b)=>a+b,0);return [n,R.rank(k)];});
    const levels=new Map();
    for(const [n,r] of looks){if(!levels.has(n))levels.set(n,{pages:new Set(),blocks:new Set()});const b=Math.floor(r/65536);levels.get(n).blocks.add(b);levels.get(n).pages.add(Math.floor(b/pe));}
    let bytes=0, req=0;
    for(const [n,v] of levels){const e=m.files[`losses/L${String(n).padStart(4,"0")}.cht`];const pos=m.levels[n-1].positions;const blocks=Math.ceil(pos/65536);const P=Math.ceil(blocks/pe);const head=88+16*P;const blk=(e.bytes-e.head_bytes-32*blocks)/blocks;
      if(e.bytes<=4096){bytes+=e.bytes;req+=1;continue;}
      bytes+=head+v.pages.size*32*Math.min(pe,blocks)+v.blocks.size*blk; req+=1+v.pages.size+v.blocks.size;}
    tot.push([bytes,req]);
  }
  tot.sort((a,b)=>a[0]-b[0]);
  console.log(`page_entries ${pe}: median ${(tot[3][0]/1024).toFixed(0)} KiB, ${tot[3][1]} requests; max ${(tot[6][0]/1024).toFixed(0)} KiB`);
}
// adaptive
function adaptive(blocks){let pe=16;while(pe<256 && pe*pe*2<blocks)pe*=2;return pe;}
let tot=[];
for (const p of positions) {
  const looks=[p,...kids(p)].map(k=>{const n=k.reduce((a,b)=>a+b,0);return [n,R.rank(k)];});
  const levels=new Map();
  for(const [n,r] of looks){const pos=m.levels[n-1].positions;const blocks=Math.ceil(pos/65536);const pe=adaptive(blocks);if(!levels.has(n))levels.set(n,{pages:new Set(),blocks:new Set(),pe});const b=Math.floor(r/65536);levels.get(n).blocks.add(b);levels.get(n).pages.add(Math.floor(b/pe));}
  let bytes=0, req=0;
  for(const [n,v] of levels){const e=m.files[`losses/L${String(n).padStart(4,"0")}.cht`];const pos=m.levels[n-1].positions;const blocks=Math.ceil(pos/65536);const pe=v.pe;const P=Math.ceil(blocks/pe);const head=88+16*P;const blk=(e.bytes-e.head_bytes-32*blocks)/blocks;
    if(e.bytes<=4096){bytes+=e.bytes;req+=1;continue;}
    bytes+=head+v.pages.size*32*Math.min(pe,blocks)+v.blocks.size*blk; req+=1+v.pages.size+v.blocks.size;}
  tot.push([bytes,req]);
}
tot.sort((a,b)=>a[0]-b[0]);
console.log(`adaptive: median ${(tot[3][0]/1024).toFixed(0)} KiB, ${tot[3][1]} requests; max ${(tot[6][0]/1024).toFixed(0)} KiB`);
