import json,sys
def load(path):
    d=json.load(open(path))
    ev=[e for e in d['traceEvents'] if e.get('ph')=='X']
    ev.sort(key=lambda e:e['ts'])
    facts=[];cur=[]
    for e in ev:
        if e['name']=='potrf' and e['args']['step']==0 and cur: facts.append(cur);cur=[]
        cur.append(e)
    facts.append(cur)
    return facts
for path in sys.argv[1:]:
    facts=load(path)
    print(path, [len(f) for f in facts])
    for f in facts[1:]:
        t0=min(e['ts'] for e in f); t1=max(e['ts']+e['dur'] for e in f)
        get=lambda n,k,i,j:[e for e in f if e['name']==n and e['args']['step']==k and e['args']['i']==i and e['args']['j']==j][0]
        nt=max(e['args']['i'] for e in f)+1
        print(f" total {(t1-t0)/1000:.2f} ms; busy sum {sum(e['dur'] for e in f)/1000:.2f} ms")
        prev_end=None
        tot={'potrf':0,'trsm':0,'syrk':0,'waitT':0,'waitS':0,'waitP':0}
        for k in range(nt):
            p=get('potrf',k,k,k)
            s=f"  k={k} P wait {(p['ts']-prev_end) if prev_end else 0:6.0f} dur {p['dur']:6.0f} tid{p['tid']}"
            tot['potrf']+=p['dur']
            if prev_end: tot['waitP']+=p['ts']-prev_end
            if k+1<nt:
                t=get('trsm',k,k+1,k); y=get('syrk',k,k+1,k+1)
                s+=f" | T wait {t['ts']-p['ts']-p['dur']:5.0f} dur {t['dur']:5.0f} tid{t['tid']} | S wait {y['ts']-t['ts']-t['dur']:5.0f} dur {y['dur']:5.0f} tid{y['tid']}"
                tot['trsm']+=t['dur'];tot['syrk']+=y['dur'];tot['waitT']+=t['ts']-p['ts']-p['dur'];tot['waitS']+=y['ts']-t['ts']-t['dur']
                prev_end=y['ts']+y['dur']
            print(s)
        print("  sums(us):",{k:round(v) for k,v in tot.items()})
