/*
 * exec_response.h - placeholder (issue 11): being written.
 */
#ifndef EXEC_RESPONSE_H
#define EXEC_RESPONSE_H

#endif
