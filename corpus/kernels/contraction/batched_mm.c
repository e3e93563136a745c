/* Batched matrix product in single precision: C[b] <- A[b] B[b] for each batch entry. */
#define BATCH 16
#define P 48
#define Q 40
#define R 56

void batched_mm(float C[BATCH][P][R], float A[BATCH][P][Q], float B[BATCH][Q][R])
{
    for (int b = 0; b < BATCH; b++)
        for (int i = 0; i < P; i++)
            for (int j = 0; j < R; j++) {
                C[b][i][j] = 0.0f;
                for (int k = 0; k < Q; k++)
                    C[b][i][j] += A[b][i][k] * B[b][k][j];
            }
}
