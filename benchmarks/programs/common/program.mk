# The rules every program of the suite shares; a program's Makefile sets PROG and includes this file.
#   make                         build ./$(PROG) at the medium dataset
#   make DATASET=-DLARGE_DATASET build another dataset (SMALL/MEDIUM/LARGE)
#   make CC=clang CFLAGS='-O2'   another compiler or flags
#   make run | make clean

# 'CC ?=' alone would keep make's built-in default 'cc'.
ifeq ($(origin CC),default)
CC := gcc
endif
CC ?= gcc
CFLAGS ?= -O3 -march=native -fopenmp
DATASET ?= -DMEDIUM_DATASET
CPPFLAGS = -I include -I ../common/include $(DATASET)
LDLIBS = -lm

SRCS := $(sort $(wildcard src/*.c)) ../common/util.c
HDRS := $(wildcard include/*.h) ../common/include/bench/util.h

.PHONY: all run clean

all: $(PROG)

$(PROG): $(SRCS) $(HDRS)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SRCS) -o $@ $(LDFLAGS) $(LDLIBS)

run: $(PROG)
	./$(PROG)

clean:
	rm -f $(PROG) *.o src/*.o
