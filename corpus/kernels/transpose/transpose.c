/* Out-of-place transpose of a fixed-size int matrix. */
#define ROWS 64
#define COLS 48

void transpose_int(int src[ROWS][COLS], int dst[COLS][ROWS])
{
    int r, c;

    for (r = 0; r < ROWS; r++)
        for (c = 0; c < COLS; c++)
            dst[c][r] = src[r][c];
}
