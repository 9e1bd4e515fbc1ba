# final (and bN: base) line ranges of mm/khugepaged.c -> patch
27 P5b
67 P6
132-134 P5b
135-137 P7
138-140 P4b
141-143 P6
144-151 P8
152-164 P10
165-171 E3b
172-174 E3c
175-186 E3b
201-232 E2a
512 P6
# prepare, report, policy_node
1161-1163 P6
1164-1171 P4b
1181-1182 P6
1184-1188 E3b
1189-1190 P6
alt 1189 P4..P6
static void collapse_control_prepare(struct collapse_control *cc)
.
1192 P6
1193 E3b
1194-1195 P6
alt 1196 P4..P4b
	if (cc->caller == COLLAPSE_KHUGEPAGED) {
.
1196-1197 P4b
1210 P7
1211 P4b
1212 P6
1213-1214 P8
1215-1217 P10
1218-1226 P6
alt 1227 P6..E3b
	if (collapse_ext_pte_limits(&cc->ext, &limits)) {
.
1227-1229 E3b
1230-1239 P6
1240 P10
1241 P6
1242-1243 P4
1244-1270 P8
1271-1283 P7
alt 1177 P4..P4b
 * may always enter direct reclaim and compaction.
.
# alloc_charge_folio (A7): __alloc_charge_folio() in E3b0
b1250-1251 E3b0
b1253-1254 P4
alt b1255 P4..E3b0
	gfp_t gfp = cc->gfp;
.
b1255 E3b0
b1256 P7
1502-1518 E3b0
1507-1514 E3b
alt 1507 E3b0..E3b
 * A @spare page is one a caller allocates ahead of its use: it neither
 * reclaims nor compacts, is charged without reclaim, and counts in
 * thp_collapse_alloc and thp_collapse_alloc_failed only where its caller
 * counts it. No caller asks for one yet.
.
1520 E3b0
1521 P7
1523 E3b0
alt 1524 P7..E3b0
	/*
	 * The node the policy prefers is tried first, without reclaim or
	 * compaction on that node alone; then, as without a policy, @node
	 * and the nodes in alloc_nmask.
	 */
.
alt 1524 P7..P8
	if (cc->policy_node != NUMA_NO_NODE)
.
alt 1524 P8..E3b0
	if (cc->policy_node != NUMA_NO_NODE) {
.
1524 E3b0
1525-1526 P7
alt 1527 P7..E3b0
				      order, cc->policy_node, NULL);
.
1527 E3b0
1528-1530 P8
1531 P7
b1258 P7
alt 1532 P7..E3b0
		folio = __folio_alloc(gfp, order, node, &cc->alloc_nmask);
.
1532 E3b0
b1260-1262 E3b0
1534-1536 E3b0
b1266 E3b0
1540-1542 E3b0
b1270 E3b0
b1274 E3b0
1549 E3b0
1556-1564 E3b
1565-1573 E3b0
# collapse_huge_page_locked() split out (E3a; A8)
1580-1590 E3a
1595 E3a
1599 E3a
1604 E3a
1608-1609 E3a
1611-1614 E3a
1616 E3a
1665 E3a
1684 E3a
1716-1717 P8
1718-1783 E3a
b1280-1470 E3a
b1459 P8
alt 1718 P8..E3a
out_up_write:
.
# mthp_collapse
1801-1831 P10
b1516 P10
1867-1868 P10
1880-1883 P8
1894-1895 P8
# collapse_scan_pmd
1957-1978 E3a
1983-1984 P4
2009-2021 P10
2177-2178 E3a
2180-2185 P7
2194-2195 E3a
2199-2204 E3a
# collapse_file, collapse_single_pmd
3062-3063 P8
3196 P7
3220-3228 P6
alt 3220 P4..P6
	collapse_control_prepare(cc);
.
# khugepaged visits (E2a), pass size (E2b)
3276-3426 E2a
3456 P5b
alt 3457 P5b..P7
	collapse_ext_get(&cc->ext, mm, COLLAPSE_KHUGEPAGED, 0);
.
3457 P7
3458-3462 E2a
b2885 E2a
3498 E2a
3511-3512 P8
3513-3514 E2a
3538 P5b
3584 E2b
b2988 E2b
3589-3590 E2a
3591-3594 E2b
# MADV_COLLAPSE: errno, batches (E3b), yield (E3c), account (P6)
3779-3781 P4b
3782 P6
alt 3779 P4b..P6
	/* only with limits: MADV_F_COLLAPSE_LIMITS */
.
3779 P6
3803-3874 E3b
3875-3918 P4b
3899 P6
3903-3905 P6
alt 3903 P4b..P6
	 * Beyond the request's pte limits (MADV_F_COLLAPSE_LIMITS): the limits
	 * are per range, so are the refusals. Without limits only a
	 * userfaultfd-armed range gets here, and ends the
.
3919-4042 E3b
3937-3938 E3c
3966-3999 E3c
4043-4047 E3c
alt 4043 E3b..E3c
 * what is swapped out, then collapse them all under a single mmap write
 * lock, revalidating the vma (which may have been unmapped, moved, split
 * or changed meanwhile) for each PMD. PMD order only, as MADV_COLLAPSE.
.
4048-4263 E3b
4212-4226 E3c
4264-4283 E3b
4284-4288 P4b
4289-4292 E3b
4293 P4b
4299 E3b
b3222 P4
alt 4321 P4..P4b
	cc->caller = COLLAPSE_MADVISE;
.
4321-4322 P4b
4324 E3b
4326 E3b
alt 4327 P5b..P7
	collapse_ext_get(&cc->ext, mm, caller, flags);
.
4327 P7
# the request loop (A9)
b3248-3268 P4b
b3270 P4b
b3246 E3b
4376-4377 E3b
4378 P8
4379 E3b
4380-4381 P4b
4394 P5b
4395 E3b
# collapse_ext_failure_of, collapse_ext_khugepaged_limits
4404-4405 P7
4406-4439 P8
4440-4443 P7
4444 P10
4445 P7
4446-4457 P10
4458-4462 P7
# the blank before the single-PMD path comes with the batch path
c3247 P4b
4375 E3b
