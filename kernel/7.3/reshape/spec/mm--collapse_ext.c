# final line ranges of mm/collapse_ext.c -> patch (the latest covering wins)
1-1673 P5a
8-9 P14        # A10 gives P5a..P13 text
17-19 P8
21 P16
26 P7
29 P7
31 P6
32 P14
33 P8
34 P5b
35 P7
37 P6
38-39 P7
40 P8
45 P16
50-51 P12
52-53 P14
54-55 P5b
56-60 P8
61-171 P8
64 E3b
68-69 P10
75-77 E3b
78-79 E2b
85 E3c
86-87 E2a
88-89 E2b
90-92 E2a
93-94 P10
95-103 P14
122 E3b
126-127 P10
133-135 E3b
136-137 E2b
143 E3c
144-145 E2a
146-147 E2b
148-150 E2a
151-152 P10
153-161 P14
173-176 P8
177-184 P16
189 P6
192 P5b
196 P8
197 P16
207-219 P8
225 P8
229-277 P5b
278-298 P5b
299-305 P5b
303-304 P6
307-357 P6
358-401 P6
378-379 P8    # A11
380 P8
383 P8
390-394 P8    # A11
396 P8
402-456 P10
457-488 P10
489-496 P8
497-535 P7
536-578 P7
556 P8
564 P8
569 P8
573 P8
579-585 P8
586-617 E3b
599 E3c
604-605 E3c
618-624 E3c
625-633 E3b
634-674 E2b
675-708 E2a
709-753 P8
754-818 P14
819-863 P16
864-968 P14
891-895 P16
909-913 P16   # A15
946 P16
955-956 P16
960 P16
964 P16
969-987 P16
988-1009 P14
991-992 P16
1000-1007 P16
1010-1016 P14
1017-1042 P16
1073-1075 P5c
1093 P6
1101 P5b
1105-1130 P5b
1131-1157 P5b
1132 E2b     # A13: P5b..E2b text; the final line names pass_size
1138-1139 E2b
1149-1150 E2b
1180-1182 P5b
1190 P16
1191-1196 P8
1199-1201 P5b
1219-1221 P5b
1235 P5b
1268-1323 P5c
1308 P6
1310 P8
1326-1327 P8  # A12
1335-1336 P8
1355-1361 P8
1367 P6
1368 P14
1398-1402 E3c
1422-1444 P6
1423-1425 P14  # A14
1436-1439 P14
1441 P14       # A14
1448 P6
1453-1459 P6
1460-1464 P14
1468-1473 P6
1474-1478 P7
1479-1484 E3b
1485-1490 E2a
1491-1495 E2b
1496-1500 P10
1501-1505 P8
1506-1510 P14
1521 P6
1522 P7
1523 E3b
1524 E2a
1525 E2b
1526 P10
1527 P8
1528 P14
1539 P5c
1548-1592 P7
1593-1612 P12
1613-1628 P7
1629-1656 P7
1633 P12
1661-1667 P7
172 P8
306 P5b
1369 P6
alt 10 P5a..P14
 * collapse asks the policy of the memcg it charges (the mm owner's). A
.
alt 1328 P5a..P8
 * lines: the policy's name and when it was attached (boot time, ns).
.
alt 1132 P5b..E2b
 * Can a policy with @ops sit on @cgrp? Every hook asks the
.
alt 390 P6..P8
		clamp_limit(&limits->max_ptes_none, max);
		clamp_limit(&limits->max_ptes_swap, max);
		clamp_limit(&limits->max_ptes_shared, max);
.
alt 1426 P6..P14
 * A policy reads its arguments and may write the fields of
 * struct collapse_ext_limits, nothing else.
.
alt 1442 P6..P14
		"collapse_ext: only the limits of struct collapse_ext_limits are writable\n");
.
alt 914 P14..P16
	verdict = call_split_underused(p, &u);
.
589-590 E3c
alt 589 E3b..E3c
 * [1, COLLAPSE_EXT_BATCH_MAX]. The caller started the range.
.
1618-1619 P10
alt 1618 P7..P10
 * now, e.g. for a policy that holds process_madvise() to them.
.
