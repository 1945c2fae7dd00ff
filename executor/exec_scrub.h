/*
 * exec_scrub.h - placeholder (issue 11): being written.
 */
#ifndef EXEC_SCRUB_H
#define EXEC_SCRUB_H

#endif
