# final line ranges of include/linux/collapse_ext.h -> patch
1-555 P5a
7-12 E3c
18 P7
19 P5b
20 P16
22 P5b
24 P16
28-41 P5b
29-31 P7
35 P6
38 P6
42-55 E2a
56-57 P5b
58-75 P5b
62-64 P6
69-70 P6
71-72 P7
73 E3c
76-87 P6
88-123 P14
129 P5c
138-178 P8
181-184 P6
185-193 P10
194-198 P7
199-202 E3b
203-208 E2a
209-213 E2b
214-217 P10
218-219 P8
220-227 P14
230 E3c
235-236 P6
237 P7
238-239 E3b
240-241 E2a
242 E2b
243 P10
244-245 P8
246 P14
249 E3c
253 E3b
254 E2b
255-265 P16
266-277 E3c
278-284 P8
285 P7
286 P14
287 P7
288-304 P14
299-302 P16
305-313 P5b
314-315 P5b
316-319 P6
320-323 P10
324-325 P8
326-327 P7
328 P8
329-331 E3b
332 E2b
333 E3c
334-336 E2a
337-339 P8
340-344 P14
345 P16
346-348 P17
349-350 P7
350 P8
351 P8
352 P7
353-366 P5b
367-377 P6
378-390 P10
391-395 P8
396-401 P7
402-405 P8
406-417 E3b
418-422 E2b
423-426 E3c
427-433 E2a
434-440 P8
441-455 P14
456-460 P16
461-465 P17
466-467 P5b
468-479 P16
480-505 P14
506-517 P16
518-547 P5b
525 P7
533-534 P6
535-536 P7
537 E3c
548-553 P6
554 P5b
alt 7 P5a..P18a
 * a cgroup v2 subtree, how to collapse huge pages and which underused
 * huge pages to split.
.
alt 7 P18a..E3c
 * a cgroup v2 subtree, how to collapse huge pages and which underused
 * huge pages to split. See Documentation/admin-guide/mm/collapse_ext.rst.
.
alt 29 P5b..P7
 * What a hook knows about the request; read-only to the policy.
.
alt 62 P5b..P6
 * see.
.
alt 185 P6..P10
 *	limits are khugepaged's (what its sysfs knobs accept).
.
alt 350 P7..P8
/* Provided by mm/khugepaged.c */
.
alt 525 P5b..P7
				    u32 flags)
.
