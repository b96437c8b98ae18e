#!/usr/bin/env python3
# bench/gcsb_beta_table.py — gcsb and gcsb-det per (precision, β): geometric mean of
# (cuSPARSE best N + best T) / (N + T), worst T/N and worst memory / CSR over gen:ideal and
# random_p with p >= 0.005. The rule's β comes from the sweep of `bench/reproduce gcsb`
# (random_p.json, ideal_beta<β>.json), the overrides from `bench/reproduce gcsb-beta`
# (beta_<precision>_<β>.json), cuSPARSE and CSR's storage from the sweep; all in DIR.
# SPDX-License-Identifier: MIT
#
#   python3 bench/gcsb_beta_table.py [DIR]     (default: the committed H100 run)
import json, glob, math, collections, os, sys
D = (sys.argv[1] if len(sys.argv) > 1 else 'bench/results/2026-11-22-h100/gcsb').rstrip('/') + '/'
S2 = S3 = D
cus={}; csr={}
for f in [S2+'random_p.json',S2+'ideal_baselines.json']:
    for r in json.load(open(f))['results']:
        k=(r['matrix']['name'],r['precision'])
        if r['format'].startswith('cusparse') and r.get('time_ms'):
            kk=k+(r['op'],); cus[kk]=min(cus.get(kk,1e9),r['time_ms'])
        if r['format']=='cusparse-csr': csr[k]=r['storage_bytes']
crit=['gen:ideal']+['gen:random_p:8192:%s'%p for p in ['0.005','0.01','0.05','0.1','0.2','0.3','0.4','0.5']]
def rows(files,fmt,prec):
    t=collections.defaultdict(dict)
    for f in files:
        for r in json.load(open(f))['results']:
            if r['format']==fmt and r['precision']==prec and r['matrix']['name'] in crit:
                t[r['matrix']['name']][r['op']]=(r['time_ms'],r['storage_bytes'])
    return t
cfgs=[('fp64','16 (rule)',[S2+'random_p.json',S2+'ideal_beta16.json']),('fp64','32',[S3+'beta_fp64_32.json']),('fp64','64',[S3+'beta_fp64_64.json']),
      ('fp32','32 (rule)',[S2+'random_p.json',S2+'ideal_beta32.json']),('fp32','16',[S3+'beta_fp32_16.json']),('fp32','64',[S3+'beta_fp32_64.json'])]
print('| precision | β | format | matrices | geo-mean cuSPARSE (N+T) / (N+T) | worst T/N | worst memory / CSR |')
print('|---|---|---|---|---|---|---|')
for prec,b,files in cfgs:
  for fmt in ['gcsb','gcsb-det']:
    t=rows(files,fmt,prec); sp=[];tn=[];mem=[]
    for m in crit:
        if m not in t or 'spmv' not in t[m] or 'spmv_t' not in t[m]: continue
        n,s=t[m]['spmv']; T=t[m]['spmv_t'][0]
        sp.append((cus[(m,prec,'spmv')]+cus[(m,prec,'spmv_t')])/(n+T)); tn.append((T/n,m)); mem.append((s/csr[(m,prec)],m))
    g=math.exp(sum(map(math.log,sp))/len(sp))
    w=max(tn); mm=max(mem)
    print(f"| {prec} | {b} | {fmt} | {len(sp)} | {g:.3f} | {w[0]:.2f} ({w[1].replace('gen:','')}) | {mm[0]:.3f} ({mm[1].replace('gen:','')}) |")
