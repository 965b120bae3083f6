"""Convert the research candidates into published_runs.csv step rows (one-off; kept in the commit as tools/import_runs.py)."""
import csv, io, re, sys
import pathlib
ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / 'docs/research/published-runs/candidates.csv'; DST = ROOT / 'lib/chipchain/data/published_runs.csv'
rows=list(csv.DictReader(open(SRC)))
have=list(csv.DictReader(open(DST,newline='')))
cols=list(have[0].keys())
if 'system' not in cols:
    i=cols.index('accelerator')+1; cols.insert(i,'system')
    for r in have: r['system']=''
def num(x):
    try: return float(x)
    except: return None
FW=[('Megatron-Bridge','megatron-core'),('NeMo AutoModel','torchtitan'),('NeMo','megatron-core'),('torchtitan','torchtitan'),
    ('DeepSpeed','deepspeed-2021'),('Megatron-LM PTD-P','megatron-2021'),('Megatron-Core','megatron-core'),('Megatron-LM','megatron-2021'),('HAI-LLM','dualpipe'),('DualPipe','dualpipe')]
def fw(r):
    f=r['framework']
    if r['family'].startswith('Megatron-LM README'): return 'megatron-core'
    if r['family'].startswith('Narayanan'): return 'deepspeed-2021' if 'DeepSpeed' in f else 'megatron-2021'
    if r['family'].startswith('DeepSeek'): return 'dualpipe'
    for k,v in FW:
        if k in f: return v
    return None
def recompute(r):
    t=r['recompute'].lower()
    if t.startswith('full') or 'activation_checkpointing: true' in t: return 'full'
    if t.startswith('selective'): return 'selective'
    if t.startswith('none'): return 'none'
    return 'none'   # not stated: the vendors' performance recipes run without recomputation unless they say so
def zero(r):
    z=r['zero_fsdp'].lower()
    if 'fsdp2' in z or 'zero-3' in z or 'megatron-fsdp' in z or 'fully shard' in z: return 3
    if 'ddp (fsdp = 0)' in z or 'distributed optimizer' in z: return 1
    if 'none (ptd-p)' in z: return 0
    return 1
out=[]; skipped=[]
seen={r['id'] for r in have}
for r in rows:
    need=[num(r[k]) for k in ('layers','hidden','heads','vocab','seq','tp','pp','global_batch','microbatch','step_seconds','n_gpus')]
    if None in need or r['kind']!='step': skipped.append((r['id'],'incomplete')); continue
    acc=r['accelerator']; system=''
    if acc=='GB200': acc='B200'; system='GB200-NVL72'
    if acc not in ('A100-SXM-80GB','H100-SXM','B200','H800'): skipped.append((r['id'],'acc '+acc)); continue
    dt=r['dtype']
    if dt=='fp8-mx': skipped.append((r['id'],'mxfp8 variant')); continue
    if dt not in ('bf16','fp8'): skipped.append((r['id'],'dtype '+dt)); continue
    f=fw(r)
    if not f: skipped.append((r['id'],'framework '+r['framework'])); continue
    L,H,A,V,S,tp,pp,B,mb,T,n=[int(x) if i!=9 else x for i,x in enumerate(need)]
    cp=int(num(r['cp']) or 1); ep=int(num(r['ep']) or 1); vp=int(num(r['vp']) or 1)
    if n%(tp*pp*cp): skipped.append((r['id'],'degrees')); continue
    dp=n//(tp*pp*cp)
    if B%(dp*mb): skipped.append((r['id'],'batch')); continue
    kv=r['kv_heads']; kvh=None if kv in ('','MLA') else int(float(kv))
    spec={'name':r['model'].split(' (')[0].strip()[:40].replace(';',',').replace('=','-'),'layers':L,'hidden':H,'heads':A,'vocab':V,'seq':S}
    if kvh and kvh!=A: spec['kv_heads']=kvh
    if num(r['ffn']): spec['ffn']=int(num(r['ffn']))
    if 'swiglu' in r['mlp'].lower(): spec['mlp_matrices']=3
    if r['tied_embeddings'].lower()=='true': spec['tied_embeddings']='true'
    if num(r['experts']):
        spec['experts']=int(num(r['experts'])); spec['experts_active']=int(num(r['active_experts']))
        if num(r['dense_layers']): spec['dense_layers']=int(num(r['dense_layers']))
        if not (num(r['params']) and num(r['active_params'])): skipped.append((r['id'],'moe params')); continue
    if num(r['params']): spec['params']=int(num(r['params']))
    if num(r['active_params']) and num(r['experts']): spec['active_params']=int(num(r['active_params']))
    if H % A and 'head_dim' not in spec: spec['head_dim']=128
    if ep>1 and not num(r['experts']): skipped.append((r['id'],'ep on dense')); continue
    cell=';'.join(f"{k}={v}" for k,v in spec.items())
    rid=r['id'][:60]
    if rid in seen: continue
    seen.add(rid)
    o={c:'' for c in cols}
    o.update(id=rid, run=(r['model'].split(' (')[0]+f" on {n} {r['accelerator']} ({dt})")[:80], family=r['family'], kind='step', model=cell,
             params=r['params'], active_params=r['active_params'] or r['params'], accelerator=acc, system=system, dtype=dt, n_gpus=str(n),
             reported=r['measured'][:120].replace('\n',' '), reported_mfu='', mfu_convention=r['flop_convention'][:120], step_seconds=f"{T:.6g}",
             tp=str(tp), pp=str(pp), dp=str(dp), batch=str(B), seq=str(S), microbatch=str(mb), virtual_stages=str(vp), recompute=recompute(r),
             sequence_parallel='true' if tp>1 and 'false' not in r['sequence_parallel'].lower() and 'n/a' not in r['sequence_parallel'].lower() else 'false',
             cp=str(cp) if cp>1 else '', cp_variant='', ep=str(ep) if ep>1 else '', zero=str(zero(r)), framework=f, schedule='DualPipe' if f=='dualpipe' else '1F1B',
             location=(r['location']+'; '+r['release_or_version'])[:300], tier='A' if r['check']=='A' else 'B',
             caveat=(('step = '+r['step_derivation']+'; ' if r['step_derivation'] else '')+('recomputation not stated: none assumed; ' if 'not stated' in r['recompute'] else '')+r['caveat'])[:400],
             bibkey='', checked='U', source=r['source'][:200])
    out.append(o)
with open(DST,'w',newline='') as fh:
    w=csv.DictWriter(fh,fieldnames=cols,lineterminator='\n'); w.writeheader(); w.writerows(have+out)
print(len(out),'added'); 
from collections import Counter; print(Counter(s[1][:20] for s in skipped))
