/*
 * exec_spool.h - placeholder (issue 11): being written.
 */
#ifndef EXEC_SPOOL_H
#define EXEC_SPOOL_H

#endif
