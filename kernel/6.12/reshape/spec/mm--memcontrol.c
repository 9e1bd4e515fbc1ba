351-358 ?
485-492 ?
1334-1377 P11
# 7.3's bpf_memcontrol.c needs these on 6.12
351-358 P11b
485-492 P11b
